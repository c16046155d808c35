import { join } from 'node:path';
import { probeSandbox, realPath, sandboxArgv, type SandboxProbe } from '../../process/sandbox.ts';
import type { SandboxConfig } from '../base/config.ts';

// The bash tool's sandbox policy over the OS sandbox (process/sandbox.ts): the workspace (and
// the user's own `sandbox.writable` paths) writable, no network unless the user config turns
// it on, and the user's choice of mode (auto, required, off).
// The user's rift configuration, trust store and the workspace's git hooks and git config stay
// read-only even when they sit inside a writable path, so a command cannot grant itself
// anything. Where bubblewrap is missing or cannot create namespaces, commands run unsandboxed and
// every front end says so.

export class Sandbox {
  private constructor(
    readonly probe: SandboxProbe,
    readonly config: SandboxConfig,
    private readonly workspace: string,
    /** Paths that stay read-only even inside a writable one. */
    private readonly protectedPaths: readonly string[],
    /** The user's own protected paths (`create`'s `protect`), kept by `within`. */
    private readonly userPaths: readonly string[],
  ) {}

  /** `protect`: the user's rift config and data directories (they hold permissions and trust). */
  static create(config: SandboxConfig, workspace: string, protect: readonly string[], env: NodeJS.ProcessEnv = process.env): Sandbox {
    const probe = config.mode === 'off' ? { available: false, binary: null, reason: 'the sandbox is turned off in the user config (sandbox.mode = "off")' } : probeSandbox(env);
    const ws = realPath(workspace);
    return new Sandbox(probe, config, ws, [...protect, join(ws, '.git', 'hooks'), join(ws, '.git', 'config')].map(realPath), protect);
  }

  /**
   * The same sandbox around a copy of the workspace (an isolated sub-agent's projection): that
   * directory writable instead of the workspace, which stays read-only with the rest, and the
   * copy's own `.rift` (its index) read-only inside it.
   */
  within(tree: string): Sandbox {
    const root = realPath(tree);
    return new Sandbox(this.probe, this.config, root, [...this.userPaths, join(root, '.rift'), join(root, '.git', 'hooks'), join(root, '.git', 'config')].map(realPath), this.userPaths);
  }

  /** Commands run inside the sandbox. */
  get active(): boolean {
    return this.probe.available && this.config.mode !== 'off';
  }

  /** The startup line every front end shows. */
  describe(): string {
    if (this.active) return `bash sandbox: bubblewrap — the workspace is writable, the rest of the filesystem read-only, network ${this.config.network ? 'on' : 'off'}`;
    if (this.config.mode === 'required') return `bash sandbox: unavailable (${this.probe.reason}); sandbox.mode is "required", so bash commands are refused`;
    return `bash sandbox: unavailable — bash commands run with your full permissions (${this.probe.reason})`;
  }

  /** Why a command may not run at all: the sandbox is required and unavailable. */
  refusal(): string | null {
    if (this.active || this.config.mode !== 'required') return null;
    return `bash runs only inside the sandbox here (sandbox.mode = "required"), and no sandbox is available: ${this.probe.reason}`;
  }

  /** `argv` run under bubblewrap in `cwd`, or unchanged when the sandbox is not active. */
  wrap(argv: readonly string[], cwd: string): string[] {
    if (!this.active) return [...argv];
    const writable = [this.workspace, ...this.config.writable.map(realPath)];
    return sandboxArgv(this.probe.binary!, { writable, protected: this.protectedPaths, network: this.config.network, cwd: realPath(cwd) }, argv);
  }
}
