// Names both sides of the workspace server's wire agree on, in a module that loads nothing.

/** Where `rift server` serves MCP. */
export const MCP_PATH = '/mcp';

/**
 * The `_meta` key a caller sets to run the workspace's hooks only when they are the list it
 * trusts (see `ChangeOptions.trustedHooks`); it can only skip hooks, never add any.
 */
export const TRUSTED_HOOKS_META = 'rift/trusted-hooks';

/**
 * The `_meta` key of a rename reviewed in the caller's process (`ChangeOptions.renameReview`):
 * `"propose"`, or `{"approved": [{"path", "sha256"}, …]}` as the proposal named them. It can
 * only stop a rename, never widen one.
 */
export const RENAME_REVIEW_META = 'rift/rename-review';
