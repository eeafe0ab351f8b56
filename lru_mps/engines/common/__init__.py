"""What the engines share: ``eigen`` (the one propagator rule, exp(-i H t) of dense blocks), ``arraylib`` (numpy,
torch or cupy for the batched stores), ``store`` (the base of every state store: declared capabilities, jumps,
resets and observations of ordinary states), ``probe`` (a copied state evolved to find a jump time)."""
