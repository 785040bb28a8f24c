/** The job graph's file in a workspace's root. Its own module: a command that only names it loads no parser. */
export const GRAPH_FILE = 'platform.json';
