"""Agent skills (SEP-2640): the folder loader and import/export of a skill."""
