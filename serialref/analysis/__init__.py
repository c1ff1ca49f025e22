"""Engine analysis of EPD files (spec 7.2, 7.3, 7.5) and Gastric, the report on them (3.3)."""
