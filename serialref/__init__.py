"""serialref: a serial-line chess referee speaking the EPD referee protocol."""

__version__ = "0.1.0"
