"""The Mord im Arosa game screens: setup, turns, confirmation, sheet, score, reveal."""
