/**
 * Every error the service answers with, by stable code. Clients branch on the code (docs/api.md "Error codes");
 * the code never changes once published, while the wording of messages may. Statuses are the HTTP edge's
 * business (http/error-status.ts).
 */
import { ACCESS_ERRORS } from './access-errors';
import { ADMIN_ERRORS } from './admin-errors';
import { FIELD_ERRORS, FILTER_ERRORS, SHAPE_ERRORS } from './query-errors';
import { REQUEST_ERRORS } from './request-errors';
import { SERVER_ERRORS } from './server-errors';

/** The catalogue in its sections; a code may appear in one section only (test/error-catalogue.test.ts). */
export const CATALOGUE_SECTIONS = [REQUEST_ERRORS, FIELD_ERRORS, FILTER_ERRORS, SHAPE_ERRORS, ACCESS_ERRORS, ADMIN_ERRORS, SERVER_ERRORS] as const;

export const Errors = {
  ...REQUEST_ERRORS, ...FIELD_ERRORS, ...FILTER_ERRORS, ...SHAPE_ERRORS, ...ACCESS_ERRORS, ...ADMIN_ERRORS, ...SERVER_ERRORS,
};

export type ErrorCode = keyof typeof Errors;

export const ERROR_CODES = Object.keys(Errors) as ErrorCode[];

export { ServiceError } from './service-error';
export type { ErrorDetail, ErrorFacts } from './service-error';
