// Types of the admin API (docs/BEHAVIOUR.md#admin-api). The JSON shapes are generated from the Go
// types into ./types.gen.ts by `make types` (app/apitypes_test.go lists them); a Go test fails when
// that file is out of date. This file names them as the UI does and adds the UI's own types: to
// change an API shape, change the Go type and run `make types`, never copy its fields here.
import type { EndpointPatch, Settings } from './types.gen';

export type * from './types.gen';
// What the forms offer and check, generated from the Go lists and range tags (app/apitypes_test.go).
export {
  AuthModes,
  BreakerNumberFields,
  BreakerParamsRanges,
  CaptureModes,
  EndpointKeyRanges,
  EndpointPatchRanges,
  MismatchModes,
  Protocols,
  SettingsRanges,
  Strategies,
} from './types.gen';
export type {
  EndpointReply as Endpoint,
  BreakerParams as BreakerOverrides,
  RequestLog as LogRow,
  RequestLog as LogDetail,
} from './types.gen';

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
