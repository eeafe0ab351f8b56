"""The Monte-Carlo wave-function (quantum trajectory) algorithm, written once for every state store."""
