"""The glucose lattice every grid lives on: integer (REF, BGM) pairs in 0..600 mg/dL (the SEG's)."""

GLUCOSE_MAX = 600  # mg/dL, the edge of the lattice
