// Names both sides of the workspace server's wire agree on, in a module that loads nothing.

/** Where `rift server` serves MCP. */
export const MCP_PATH = '/mcp';

/**
 * The `_meta` key a caller sets to run the workspace's hooks only when they are the list it
 * trusts (see `ChangeOptions.trustedHooks`); it can only skip hooks, never add any.
 */
export const TRUSTED_HOOKS_META = 'rift/trusted-hooks';
