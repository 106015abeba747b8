"""Every version of every definition: diff and revert, the history pages, retention."""
