"""A recorded incident folder: which sources' parts it holds, read by each source's own snapshot reader
(``folder``), and writing one from the live sources with the scenario.yaml that replays it (``writer``)."""
