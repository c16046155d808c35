import type { PermissionOption } from '@agentclientprotocol/sdk';
import type { AskRequest, ChoiceMeaning } from '../agent/policy/gate.ts';

// rift's permission questions as ACP `session/request_permission` options. Each rift choice
// keeps its own words as the option's name; its meaning picks the option kind: a one-off allow
// is `allow_once`, an "always allow" rule and a session grant are `allow_always`, deny is
// `reject_once`. When the question names the rule an "always allow" would add, a
// `reject_always` option denies that rule from now on (the user config's `permissions.deny`).

/** What a selected option answers: the rift choice, and the rule to deny from now on. */
export interface OptionAnswer {
  /** null: the question was dismissed (the model proceeds on its own judgment). */
  choice: string | null;
  allows: boolean;
  rejectAlways?: string;
}

const KIND: Record<ChoiceMeaning, PermissionOption['kind']> = {
  allow_once: 'allow_once',
  allow_always: 'allow_always',
  allow_session: 'allow_always',
  deny: 'reject_once',
};

/**
 * The options for one ask, and what each option id answers. A question without meanings (the
 * model's `ask_user`) offers its choices as one-off options plus a dismissal; one without
 * choices (free text) cannot be asked through a permission request and yields no options.
 */
export function permissionOptions(req: AskRequest): { options: PermissionOption[]; answers: Map<string, OptionAnswer> } {
  const options: PermissionOption[] = [];
  const answers = new Map<string, OptionAnswer>();
  const add = (optionId: string, name: string, kind: PermissionOption['kind'], answer: OptionAnswer) => {
    options.push({ optionId, name, kind });
    answers.set(optionId, answer);
  };
  if (req.meanings && req.meanings.length === req.choices.length) {
    req.choices.forEach((choice, i) => {
      const meaning = req.meanings![i];
      add(meaning, choice, KIND[meaning], { choice, allows: meaning !== 'deny' });
    });
    const deny = req.choices[req.meanings.indexOf('deny')];
    if (req.rule && deny !== undefined) add('reject_always', `always deny '${req.rule}'`, 'reject_always', { choice: deny, allows: false, rejectAlways: req.rule });
    return { options, answers };
  }
  if (req.choices.length === 0) return { options, answers };
  req.choices.forEach((choice, i) => add(`choice-${i + 1}`, choice, 'allow_once', { choice, allows: true }));
  add('dismiss', 'dismiss', 'reject_once', { choice: null, allows: false });
  return { options, answers };
}
