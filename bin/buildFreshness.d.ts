/** Whether dist/ is at least as new as every source file it is built from (`root`: the package root, ending in `/`). */
export function buildIsFresh(root: URL): boolean;
