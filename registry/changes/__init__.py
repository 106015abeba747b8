"""Changes to the registry: change sets opened and published after commit (``publish``), who made
them (``authorship``), and what a worker's bus missed (``reconcile``)."""
