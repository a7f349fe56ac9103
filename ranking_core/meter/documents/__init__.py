"""The meter report as people read it: tables for readers
(:mod:`~ranking_core.meter.drawing.display`), figures (Plotly:
:mod:`~ranking_core.meter.documents.figures`; matplotlib:
:mod:`~ranking_core.meter.drawing.grid_plots`), the document's content and HTML
(:mod:`~ranking_core.meter.documents.document`, :mod:`~ranking_core.meter.documents.blocks`),
the PDF (:mod:`~ranking_core.meter.documents.pdf`) and file exports
(:mod:`~ranking_core.meter.documents.export`)."""
