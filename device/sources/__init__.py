"""Frame sources: one interface (``FrameSource``), adapters for picamera2, OpenCV captures and video files, the
reconnecting wrapper for live cameras, and the spec parser for ``--camera``."""

from .frames import CameraLost, CameraRestored, Frame, FrameSource, Gap, SourceError, SourceEvent, iter_frames
from .opencv import OpenCVCapture, VideoFileSource
from .picamera import CAMERA_MODES, CameraMode, Picamera2Source, camera_controls
from .reconnect import ReconnectingSource
from .spec import SourceSpec, open_source, parse_source_spec

__all__ = [
    "CAMERA_MODES", "CameraLost", "CameraMode", "CameraRestored", "Frame", "FrameSource", "Gap", "OpenCVCapture",
    "Picamera2Source", "ReconnectingSource", "SourceError", "SourceEvent", "SourceSpec", "VideoFileSource",
    "camera_controls", "iter_frames", "open_source", "parse_source_spec",
]
