"""Meter and sensor readings in, (BGM, REF) pairs out: pair files read through the input layer
(:mod:`~ranking_core.meter.pairs.readings`), sensor series paired with reference readings nearest
in time (:mod:`~ranking_core.meter.pairs.pairing`), device-platform exports (Nightscout,
Tidepool: :mod:`~ranking_core.meter.pairs.device_exports`)."""
