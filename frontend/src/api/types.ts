// Types of the admin API (docs/BEHAVIOUR.md#admin-api). The JSON shapes are generated from the Go
// types into ./types.gen.ts by `make types` (app/apitypes_test.go lists them); a Go test fails when
// that file is out of date. This file names them as the UI does and adds the UI's own types: to
// change an API shape, change the Go type and run `make types`, never copy its fields here.
import type {
  EndpointPatch as GenEndpointPatch,
  EndpointReply as GenEndpoint,
  Explanation as GenExplanation,
  RequestLog as GenRequestLog,
  Settings as GenSettings,
} from './types.gen';
import type { Rule, RuleStep, SettingsWarning } from './pending';

export type * from './types.gen';
export type * from './pending';
export type { BreakerParams as BreakerOverrides } from './types.gen';

// The fields routing rules add (./pending.ts), on the generated shapes until they carry them.
export type Settings = GenSettings & { rules: Rule[] };
export type EndpointPatch = GenEndpointPatch & { tags: string[] | null };
export type Endpoint = GenEndpoint & { tags: string[] };
export type Explanation = GenExplanation & { rule?: string; rules?: RuleStep[] };
export type LogRow = GenRequestLog & { rule?: string };
export type LogDetail = LogRow;
/** The answer of PUT /api/settings: the settings, and what it accepted with a warning. */
export type SettingsReply = Settings & { warnings?: SettingsWarning[] };

/** Database ids are integers in the API. */
export type Id = number;

/** Body of POST /api/endpoints and PUT /api/endpoints/{id}: any subset of the fields (PUT keeps the rest). */
export type EndpointInput = Partial<EndpointPatch>;

/** Filters of GET /api/logs; they go in the query string. */
export interface LogQuery {
  limit?: number;
  before?: number | null;
  endpoint?: string;
  status?: string;
  model?: string;
}

/** Body of PUT /api/settings from the UI: any subset of the fields, never `prices` (see ApiClient.updateSettings). */
export type SettingsPatch = Partial<Omit<Settings, 'prices'>>;
