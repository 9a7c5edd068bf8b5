"""How the static rules read a candidate's AST. static.py is the front: the rule table (every
rule's reason) and `check_source`. Here, grouped by what they guard: names and imports
(names.py), module state (state.py), one program on both devices (device.py), a launch the entry
reaches (reach.py), and the walk that applies them with the launcher's and the kernels' own rules
(walk.py); paths.py reads names."""
