/**
 * How often the dashboard reads again what events ask it to: at most every MIN_RELOAD_MS. A page open on a building
 * want read it again as soon as its last read ended: back to back for as long as the build ran, each read the
 * want, its tree and pages of its runs, taken from the daemon's share of the two cores the build runs on
 * (docs/decisions.md, session 19). Here, not in the UI's code, so that its tests can hold the UI to it.
 */
export const MIN_RELOAD_MS = 250;
