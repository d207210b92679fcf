/** One file an emitter writes, by its path under the output folder. */
export interface EmittedFile {
  path: string;
  text: string;
}
