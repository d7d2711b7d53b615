"""Documents: uploads, what is stored per ingested file, deletion, and citation locations."""
