"""Message catalogs: one ``de_<area>.py`` module per area of the app."""
