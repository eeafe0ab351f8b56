"""The physics: units, qutrit operators, the disordered array (model) and the paper's analytic results.

Nothing here knows how states are stored or evolved (docs/physics.md §1-§5, §9).
"""
