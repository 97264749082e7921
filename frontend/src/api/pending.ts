// Routing rules and endpoint tags (docs/BEHAVIOUR.md: routing rules), written by hand until the Go types that
// carry them exist; then types.gen.ts has them and this file goes.
import type { Protocol, Strategy } from './types.gen';

export interface HeaderMatch {
  name: string;
  pattern: string;
}

export interface RuleWhen {
  protocol?: Protocol;
  models?: string[];
  agent?: 'main' | 'subagent';
  thinking?: boolean;
  input_tokens_over?: number;
  tools?: 'web_search';
  images?: boolean;
  header?: HeaderMatch;
}

export interface RuleThen {
  endpoints: string[];
  model_map?: Record<string, string>;
  strategy?: Strategy;
  fallback: boolean;
}

export interface Rule {
  name: string;
  when: RuleWhen;
  then: RuleThen;
}

/** One rule the dry run looked at, up to and including the one that matched. */
export interface RuleStep {
  name: string;
  matched: boolean;
  why: string;
}

/** Something PUT /api/settings accepted but wants said, e.g. a rule an earlier one always shadows. */
export interface SettingsWarning {
  field: string;
  code: string;
  message: string;
}
