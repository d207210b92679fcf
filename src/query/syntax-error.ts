import { ODataError } from '../http/odata-error';

/** A query option that is not well-formed OData: 400, pointing at the offset where reading stopped. */
export class QuerySyntaxError extends ODataError {
  constructor(readonly option: string, readonly position: number, message: string) {
    super(400, 'BadRequest', `${option}: ${message} (at position ${position})`, option);
  }
}
