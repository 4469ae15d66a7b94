-- Listing a folder's notes, newest first, is the app's main query.
CREATE INDEX note_by_folder ON note(folder_id, created DESC);
