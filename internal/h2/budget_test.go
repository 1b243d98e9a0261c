package h2

// allocBudget is the allocations allowed per small GET (client and
// in-process server together).
const allocBudget = 1
