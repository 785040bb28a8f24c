/**
 * How often the dashboard reads again what events ask it to: at most every MIN_RELOAD_MS. A page open on a building
 * want read it again as soon as its last read ended: back to back for as long as the build ran, each read the
 * want, its tree and pages of its runs, taken from the daemon's share of the two cores the build runs on
 * (docs/decisions.md, session 19). Here, not in the UI's code, so that its tests can hold the UI to it.
 */
export const MIN_RELOAD_MS = 250;

/**
 * How often a taint's page reads again when it cannot tell which builds concern it: a page that does not hold all
 * of the taint's refs (more than one page of them) reads again at any build, at most every LARGE_TAINT_RELOAD_MS.
 * A read is cheap now (the fold keeps the count; it walked all 100,000 refs, 50-70 ms, before), but a build of any
 * partition anywhere makes such a page read: the gap bounds one open page's reads through a long rebuild.
 */
export const LARGE_TAINT_RELOAD_MS = 2_000;
