"""Camera model and table geometry: image pixels to table millimetres at any height above the cloth."""
