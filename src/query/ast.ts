/**
 * Parse trees of OData system query options. The parser produces them without knowing the model;
 * the binder checks them against the field tables. Every node keeps its offset in the option's text
 * so errors can point at it.
 */

export type LiteralType =
  | 'null' | 'boolean' | 'integer' | 'decimal' | 'double' | 'string'
  | 'date' | 'dateTimeOffset' | 'timeOfDay' | 'guid' | 'duration' | 'enum' | 'binary' | 'geo';

export interface LiteralNode {
  readonly kind: 'literal';
  readonly type: LiteralType;
  /** string for text-like literals, number for numbers, boolean, or null. */
  readonly value: string | number | boolean | null;
  /** For `enum` and other typed literals: the type prefix as written. */
  readonly typeName?: string;
  readonly pos: number;
}

export interface MemberNode {
  readonly kind: 'member';
  /** Path segments as written: `ListingKey`, or `a/Name` inside a lambda. */
  readonly path: readonly string[];
  readonly pos: number;
}

export interface CallNode {
  readonly kind: 'call';
  /** Lower-cased function name. */
  readonly name: string;
  readonly args: readonly ExprNode[];
  readonly pos: number;
}

export type ComparisonOp = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le' | 'has';
export type ArithmeticOp = 'add' | 'sub' | 'mul' | 'div' | 'divby' | 'mod';

export interface CompareNode {
  readonly kind: 'compare';
  readonly op: ComparisonOp;
  readonly left: ExprNode;
  readonly right: ExprNode;
  readonly pos: number;
}

export interface ArithmeticNode {
  readonly kind: 'arithmetic';
  readonly op: ArithmeticOp;
  readonly left: ExprNode;
  readonly right: ExprNode;
  readonly pos: number;
}

/** `and`/`or` chains are kept flat, so ten thousand terms do not make a tree ten thousand deep. */
export interface LogicalNode {
  readonly kind: 'logical';
  readonly op: 'and' | 'or';
  readonly operands: readonly ExprNode[];
  readonly pos: number;
}

export interface NotNode {
  readonly kind: 'not';
  readonly operand: ExprNode;
  readonly pos: number;
}

export interface NegateNode {
  readonly kind: 'negate';
  readonly operand: ExprNode;
  readonly pos: number;
}

export interface InNode {
  readonly kind: 'in';
  readonly left: ExprNode;
  readonly list: readonly ExprNode[];
  readonly pos: number;
}

export interface LambdaNode {
  readonly kind: 'lambda';
  readonly fn: 'any' | 'all';
  readonly collection: MemberNode;
  /** Absent for the argument-less `any()`. */
  readonly variable?: string;
  readonly predicate?: ExprNode;
  readonly pos: number;
}

export type ExprNode =
  | LiteralNode | MemberNode | CallNode | CompareNode | ArithmeticNode | LogicalNode | NotNode | NegateNode | InNode | LambdaNode;

export interface OrderByItem {
  readonly expr: ExprNode;
  readonly direction: 'asc' | 'desc';
  readonly pos: number;
}

export interface SelectItem {
  /** `*` or a property path. */
  readonly path: readonly string[];
  readonly pos: number;
}

export interface ExpandItem {
  readonly path: readonly string[];
  readonly options: QueryOptionsTree;
  readonly pos: number;
}

/** The system query options of one request (or of one expansion), parsed. */
export interface QueryOptionsTree {
  readonly filter?: ExprNode;
  readonly orderby?: readonly OrderByItem[];
  readonly select?: readonly SelectItem[];
  readonly expand?: readonly ExpandItem[];
  readonly top?: number;
  readonly skip?: number;
  readonly count?: boolean;
  readonly skiptoken?: string;
  readonly format?: string;
  /** Options that are valid OData but that this service does not implement, by name. */
  readonly unsupported: readonly string[];
  /** The options' texts as written (by canonical name, without `$`), for binding a $skiptoken to its query. */
  readonly texts?: Readonly<Record<string, string>>;
}
