import { previewDiff, diffSegments } from './diff.ts';
import type { ChoiceMeaning, Gate } from './gate.ts';
import { type PermissionRules, builtinBashDenied, suggestBashPattern, suggestEditRule } from './permissions.ts';
import { analyzeShell, initShell } from './shell.ts';
import { ToolError } from '../base/tool.ts';

// The approval model (reference A.8): built-in bash deny list, then user rules
// (deny > ask > allow), then the approval mode. One shared flag, read per gated action, so a
// front end can flip it mid-turn.

export type GatedKind = 'write' | 'edit' | 'bash';

export interface EditProposal {
  kind: 'write' | 'edit';
  absPath: string;
  /** Prior text, '' for a new file; null when the prior content is binary. */
  old: string | null;
  proposed: string;
}

/** A change-service mutation: every file it may touch, and what to show the user. */
export interface ChangeProposal {
  tool: string;
  files: Array<{ absPath: string; kind: 'write' | 'edit' }>;
  detail: string[];
}

export interface EditAuthorization {
  content: string;
  /** The reviewer applied something other than the proposal. */
  partial: boolean;
}

export const PARTIAL_NOTE = '\nNOTE: the user accepted only part of your proposal in review — re-read the file to see what was applied.';

const denied = (kind: GatedKind) =>
  new ToolError(`the user DENIED this ${kind} action. Do not retry it; ask them how to proceed or choose another approach.`);

/** A call to a tool rift does not check itself (an MCP server's): its name, the grant group, its arguments. */
export interface ToolProposal {
  name: string;
  /** "allow all … this session" covers the group (the MCP server). */
  group: string;
  args: Record<string, unknown>;
}

const TOOL_ARGS_DETAIL_CHARS_MAX = 2000;

export class Approval {
  /** Approval mode: true means gated actions prompt unless a rule or grant covers them. */
  approve: boolean;
  private readonly grants = new Set<GatedKind>();
  private readonly toolGrants = new Set<string>();
  private allBash = false;

  constructor(
    approve: boolean,
    readonly rules: PermissionRules,
    private readonly cwd: string,
    /** Persists an "always allow" (or "reject always") rule to the user config; failures are reported, not fatal. */
    private readonly persistRule: (rule: string, list: 'allow' | 'deny') => void = () => {},
  ) {
    this.approve = approve;
  }

  /** A "reject always" answer to an ask that offered `rule`: it denies from now on, in this session and the user config. */
  rejectAlways(rule: string): void {
    this.rules.addDeny(rule);
    this.persistRule(rule, 'deny');
  }

  /** Ask rules with nobody attached deny (headless); under auto-approve with a user attached they are suppressed. */
  private noUser(kind: GatedKind, rule: string): ToolError {
    return new ToolError(`this ${kind} requires interactive approval (permission rule '${rule}') and no user is attached`);
  }

  async authorizeEdit(gate: Gate, p: EditProposal, signal: AbortSignal): Promise<EditAuthorization> {
    const verdict = this.rules.verdict(p.kind, p.absPath);
    if (verdict.kind === 'deny') throw new ToolError(`this ${p.kind} was blocked by permission rule '${verdict.rule}'`);
    const forced = verdict.kind === 'ask' ? verdict.rule : null;
    if (forced && !gate.interactive) throw this.noUser(p.kind, forced);
    if (!this.approve) return { content: p.proposed, partial: false };
    if (verdict.kind === 'allow') return { content: p.proposed, partial: false };
    if (!forced && this.grants.has(p.kind)) return { content: p.proposed, partial: false };
    if (!gate.interactive) throw this.noUser(p.kind, 'approval mode');

    if (gate.review && p.old !== null) {
      const decision = await gate.review(
        { tool: p.kind, path: p.absPath, old: p.old, new: p.proposed, segments: diffSegments(p.old, p.proposed) },
        signal,
      );
      if (decision !== 'unavailable') {
        if (decision === null || !decision.apply) {
          throw new ToolError(`the user DENIED this ${p.kind} action in review. Do not retry it; ask them how to proceed or choose another approach.`);
        }
        const content = decision.content ?? p.proposed;
        return { content, partial: content !== p.proposed };
      }
    }

    const summary = p.kind === 'write' ? `${p.absPath} (${Buffer.byteLength(p.proposed)} bytes)` : p.absPath;
    const rule = suggestEditRule(this.cwd, p.absPath);
    const choices = forced ? ['allow', 'deny'] : ['allow', `always allow ${p.kind} this session`, `always allow '${rule}'`, 'deny'];
    const meanings: ChoiceMeaning[] = forced ? ['allow_once', 'deny'] : ['allow_once', 'allow_session', 'allow_always', 'deny'];
    const answer = await gate.ask(
      {
        question: forced ? `Allow ${p.kind} ('${forced}'): ${summary}` : `Allow ${p.kind}: ${summary}`,
        detail: p.old === null ? ['(overwriting a binary file)'] : previewDiff(p.old, p.proposed, 40),
        choices,
        meanings,
        ...(forced ? {} : { rule }),
      },
      signal,
    );
    if (answer === null || !choices.includes(answer) || answer === 'deny') throw denied(p.kind);
    if (answer === choices[1] && !forced) this.grants.add(p.kind);
    if (answer === choices[2] && !forced) {
      this.rules.addAllow(rule);
      this.persistRule(rule, 'allow');
    }
    return { content: p.proposed, partial: false };
  }

  /**
   * A change through rift's change service (replace_symbol, patch): the files are known, the new
   * content is not (the service resolves it), so this is a plain ask naming the files. Rules are
   * the edit family per file — `write` for files the change creates — and every file must pass.
   */
  async authorizeChange(gate: Gate, p: ChangeProposal, signal: AbortSignal): Promise<void> {
    const kinds = new Set<'write' | 'edit'>();
    let forced: string | null = null;
    let allowed = p.files.length > 0;
    for (const f of p.files) {
      kinds.add(f.kind);
      const verdict = this.rules.verdict(f.kind, f.absPath);
      if (verdict.kind === 'deny') throw new ToolError(`this ${p.tool} was blocked by permission rule '${verdict.rule}' (${f.absPath}); nothing was written`);
      if (verdict.kind === 'ask') forced ??= verdict.rule;
      if (verdict.kind !== 'allow') allowed = false;
    }
    if (forced && !gate.interactive) throw new ToolError(`this ${p.tool} requires interactive approval (permission rule '${forced}') and no user is attached`);
    if (!this.approve || allowed) return;
    if (!forced && [...kinds].every((k) => this.grants.has(k))) return;
    if (!gate.interactive) throw new ToolError(`this ${p.tool} requires interactive approval (approval mode) and no user is attached`);

    const grant = `always allow ${[...kinds].sort().join('/')} this session`;
    const choices = forced ? ['allow', 'deny'] : ['allow', grant, 'deny'];
    const meanings: ChoiceMeaning[] = forced ? ['allow_once', 'deny'] : ['allow_once', 'allow_session', 'deny'];
    const names = p.files.map((f) => f.absPath).join(', ');
    const answer = await gate.ask(
      { question: forced ? `Allow ${p.tool} ('${forced}'): ${names}` : `Allow ${p.tool}: ${names}`, detail: p.detail, choices, meanings },
      signal,
    );
    if (answer === null || !choices.includes(answer) || answer === 'deny') {
      throw new ToolError(`the user DENIED this ${p.tool}. Do not retry it; ask them how to proceed or choose another approach.`);
    }
    if (!forced && answer === grant) for (const k of kinds) this.grants.add(k);
  }

  /**
   * The built-in list, then the rules over every program the command runs, then what the shell
   * grammar could not settle: that is asked about once (never granted for the session), or
   * refused when approval is off or nobody can answer.
   */
  async authorizeBash(gate: Gate, command: string, signal: AbortSignal): Promise<void> {
    await initShell();
    const analysis = analyzeShell(command, { cwd: this.cwd, env: this.rules.env });
    if (builtinBashDenied(analysis, this.cwd, this.rules.env)) throw new ToolError(`command blocked by permission policy: ${command}`);
    const verdict = this.rules.bashVerdict(analysis);
    if (verdict.kind === 'deny') throw new ToolError(`this bash command was blocked by permission rule '${verdict.rule}'`);
    const unsure = analysis.undecidable[0];
    const forced = verdict.kind === 'ask' ? verdict.rule : null;
    if (forced && !gate.interactive) throw this.noUser('bash', forced);
    if (unsure !== undefined) {
      if (!this.approve) {
        throw new ToolError(`this bash command cannot be checked before it runs (${unsure}), and approval is off, so it was refused. Write it as plain commands the permission rules can read, or turn approval on to be asked.`);
      }
      if (!gate.interactive) throw new ToolError(`this bash command cannot be checked before it runs (${unsure}) and no user is attached to approve it`);
    }
    if (!this.approve) return;
    if (unsure === undefined && verdict.kind === 'allow') return;
    if (unsure === undefined && !forced && this.allBash) return;
    if (!gate.interactive) throw this.noUser('bash', 'approval mode');

    const pattern = suggestBashPattern(command);
    const strict = forced !== null || unsure !== undefined;
    const choices = strict ? ['allow once', 'deny'] : ['allow once', `always allow '${pattern}'`, 'allow all bash this session', 'deny'];
    const meanings: ChoiceMeaning[] = strict ? ['allow_once', 'deny'] : ['allow_once', 'allow_always', 'allow_session', 'deny'];
    const rule = `Bash(${pattern})`;
    const head = command.length > 120 ? command.slice(0, 120) : command;
    const why = forced ? ` ('${forced}')` : unsure !== undefined ? ` (cannot be checked before it runs: ${unsure})` : '';
    const answer = await gate.ask({ question: `Allow bash${why}: ${head}`, detail: [], choices, meanings, ...(strict ? {} : { rule }) }, signal);
    if (answer === null || !choices.includes(answer) || answer === 'deny') throw denied('bash');
    if (!strict && answer === choices[1]) {
      this.rules.addAllow(rule);
      this.persistRule(rule, 'allow');
    }
    if (!strict && answer === choices[2]) this.allBash = true;
  }

  /**
   * A call to a tool whose effects rift cannot see (an MCP server's): rules by the tool's name
   * (`Mcp(<glob>)` or the bare name; deny > ask > allow), then the approval mode. "Always allow"
   * persists `Mcp(<name>)`; a session grant covers every tool of the same server.
   */
  async authorizeTool(gate: Gate, p: ToolProposal, signal: AbortSignal): Promise<void> {
    const verdict = this.rules.toolVerdict(p.name);
    if (verdict.kind === 'deny') throw new ToolError(`this call to ${p.name} was blocked by permission rule '${verdict.rule}'`);
    const forced = verdict.kind === 'ask' ? verdict.rule : null;
    const noUser = (rule: string) => new ToolError(`this call to ${p.name} requires interactive approval (permission rule '${rule}') and no user is attached`);
    if (forced && !gate.interactive) throw noUser(forced);
    if (!this.approve || verdict.kind === 'allow') return;
    if (!forced && this.toolGrants.has(p.group)) return;
    if (!gate.interactive) throw noUser('approval mode');

    const rule = `Mcp(${p.name})`;
    const grant = `allow all '${p.group}' tools this session`;
    const choices = forced ? ['allow once', 'deny'] : ['allow once', `always allow '${rule}'`, grant, 'deny'];
    const meanings: ChoiceMeaning[] = forced ? ['allow_once', 'deny'] : ['allow_once', 'allow_always', 'allow_session', 'deny'];
    const args = JSON.stringify(p.args, null, 2);
    const detail = (args.length > TOOL_ARGS_DETAIL_CHARS_MAX ? `${args.slice(0, TOOL_ARGS_DETAIL_CHARS_MAX)}…` : args).split('\n');
    const answer = await gate.ask({ question: `Allow ${p.name}${forced ? ` ('${forced}')` : ''}`, detail, choices, meanings, ...(forced ? {} : { rule }) }, signal);
    if (answer === null || !choices.includes(answer) || answer === 'deny') {
      throw new ToolError(`the user DENIED this call to ${p.name}. Do not retry it; ask them how to proceed or choose another approach.`);
    }
    if (!forced && answer === choices[1]) {
      this.rules.addAllow(rule);
      this.persistRule(rule, 'allow');
    }
    if (!forced && answer === choices[2]) this.toolGrants.add(p.group);
  }
}
