"""Pixels to events: detection, identity, tracking, events and shot segmentation."""
