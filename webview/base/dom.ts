/**
 * A tiny element builder for the dashboard, so panels read as a tree instead of long runs of
 * createElement / setAttribute. Nothing is ever parsed from strings (no innerHTML): the
 * page runs under a strict Content-Security-Policy and token strings from the user's data
 * are always text.
 *
 * Leaves out: diffing or any virtual DOM; panels rebuild or patch their own nodes.
 */

/** A child: a node, text, or nothing. */
export type Child = Node | string | number | null | undefined | false;

/** Properties of a new element. */
export interface Props {
  readonly className?: string;
  readonly id?: string;
  /** Attributes (aria-*, role, data-*, type, …); false/null/undefined leave one out. */
  readonly attrs?: { readonly [name: string]: string | number | boolean | null | undefined };
  /** Event listeners. */
  readonly on?: { readonly [event: string]: (e: Event) => void };
}

/** Creates an element with props and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.className) el.className = props.className;
  if (props.id) el.id = props.id;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const [event, fn] of Object.entries(props.on ?? {})) el.addEventListener(event, fn);
  append(el, ...children);
  return el;
}

/** Appends children (text becomes text nodes). */
export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces all children of `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}
