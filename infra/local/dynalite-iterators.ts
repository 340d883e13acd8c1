/**
 * dynalite 4 turns abstract-level iterators into streams and, when a stream
 * ends or is destroyed, closes the iterator through `iterator.return()`; but
 * abstract-level 3's iterators have no `return()` (only `close()`), so no
 * iterator dynalite opens is ever closed. Each one stays registered in its
 * database (the Iterator objects grow with every Query and write) and, on
 * disk (classic-level), keeps its LevelDB snapshot: the memtables and tables
 * it saw stay in memory. That was most of the local stack's RSS growth per
 * run (issue 16). Giving the iterators the async-iterator `return()` dynalite
 * expects closes each one when its stream is done.
 */
import { createRequire } from "node:module";

interface ClosableIterator {
  close(): Promise<void>;
  return?: () => Promise<IteratorReturnResult<undefined>>;
}

// Resolved from dynalite's own location: the abstract-level instance its databases use.
const fromDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"));
const level = fromDynalite("abstract-level") as Record<string, { prototype: ClosableIterator }>;

for (const name of ["AbstractIterator", "AbstractKeyIterator", "AbstractValueIterator"]) {
  const proto = level[name].prototype;
  if (typeof proto.return === "function") continue;
  proto.return = async function (this: ClosableIterator) {
    await this.close();
    return { done: true, value: undefined };
  };
}
