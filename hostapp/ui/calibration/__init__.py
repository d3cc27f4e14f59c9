"""The calibration wizard page of the app (see :mod:`hostapp.calibration`)."""

from __future__ import annotations

from PyQt6.QtWidgets import QWidget

from hostapp.ui.calibration.page import CalibrationPage
from hostapp.ui.context import AppContext

__all__ = ["CalibrationPage", "create_page"]


def create_page(context: AppContext, parent: QWidget | None = None) -> QWidget:
    """The calibration page, as the main window's page factory expects."""
    return CalibrationPage(context, parent)
