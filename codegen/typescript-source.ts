/**
 * What the TypeScript emitters share: one ts-morph source file per artifact, formatted the same way and
 * opened by the generator's header, and deterministic literals for plain data.
 * Generated modules import only types from the runtime, so a generated folder can be loaded from anywhere.
 */
import { IndentationText, NewLineKind, Project, QuoteKind, SourceFile, WriterFunction } from 'ts-morph';
import type { EmittedFile } from './emitted-file';
import type { PreviousOutput } from './storage-snapshot';

export interface EmitContext {
  /** The generator's header: names the dictionary and says the file is not to be edited. */
  header: string;
  /** Import specifier of the runtime's model types, relative to the output folder. */
  modelImport: string;
  /** What the output folder held before this run, for the artifacts that build on it (the migrations). */
  previous?: PreviousOutput;
  /** Where emitters say what the person who changed the dictionary should know (printed by `generate`). */
  notices?: string[];
}

/** The model import as seen from a file `depth` folders below the output folder. */
export function modelImportAt(context: EmitContext, depth: number): string {
  return depth === 0 ? context.modelImport : `${'../'.repeat(depth)}${context.modelImport.replace(/^\.\//, '')}`;
}

/** Builds one TypeScript file with ts-morph and returns its formatted text under the header. */
export function typeScriptFile(path: string, header: string, fill: (file: SourceFile) => void): EmittedFile {
  const project = new Project({
    useInMemoryFileSystem: true,
    manipulationSettings: {
      indentationText: IndentationText.TwoSpaces,
      newLineKind: NewLineKind.LineFeed,
      quoteKind: QuoteKind.Single,
      useTrailingCommas: true,
    },
  });
  const file = project.createSourceFile(path, '');
  fill(file);
  file.formatText({ indentSize: 2, convertTabsToSpaces: true, ensureNewLineAtEndOfFile: true });
  return { path, text: `// ${header}\n\n${file.getFullText()}` };
}

/** An array literal with one item per line, or `[]`. */
export function listLiteral(items: readonly unknown[]): WriterFunction {
  return (w) => {
    w.write('[');
    if (items.length) {
      w.newLine();
      w.indent(() => { for (const item of items) w.writeLine(`${literal(item)},`); });
    }
    w.write(']');
  };
}

export function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A compact, deterministic TypeScript literal for plain data (strings, numbers, booleans, arrays, objects). */
export function literal(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  if (v && typeof v === 'object') {
    const parts = Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${k}: ${literal(x)}`);
    return `{ ${parts.join(', ')} }`;
  }
  throw new Error(`cannot write ${String(v)} as a literal`);
}
