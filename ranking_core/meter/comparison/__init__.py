"""Method comparison of a device against its reference, as a laboratory files it beside the error
grids (CLSI EP09): Passing–Bablok and Deming regression of the device (y) on the reference (x)
with their 95 % intervals, the bias at medical decision levels, and Bland–Altman limits of
agreement with their intervals. Each analysis is a function of the pairs returning a frozen
result with ``to_dict()`` (JSON) and ``tables()`` (reader tables)."""
