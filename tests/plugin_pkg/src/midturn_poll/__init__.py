"""A poll dialect (`poll`) and a scratch store (`scratch://`) for midturn."""
