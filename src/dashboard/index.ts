// dashboard/: the live dashboard page the node RPC serves at /dashboard (`[rpc] dashboard`).
// Owns: the page (client/, bundled with uPlot by esbuild at build time or on first use from the
// sources) and its HTTP answer. Does not own: any data; the page reads the node's public RPC and
// WebSocket events only.
export { type DashboardAssets, dashboardAssets } from "./assets.js";
export { dashboardPages, renderPage, serveDashboard } from "./page.js";
