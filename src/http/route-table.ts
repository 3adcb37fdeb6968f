/**
 * The app's routes as a table (method and pattern, from Elysia's `app.routes`), matched against a path:
 * which pattern a path is (the metrics' route label of a request refused before routing), and which
 * methods a path has (the `Allow` of a 405). A pattern's `:param` is one segment, `*` the rest.
 */
export type Route = { method: string; path: string };

export class RouteTable {
  private compiled: { count: number; routes: { method: string; path: string; segments: string[] }[] } | null = null;

  constructor(private readonly routes: () => readonly Route[]) {}

  private table() {
    const routes = this.routes();
    if (!this.compiled || this.compiled.count !== routes.length)
      this.compiled = { count: routes.length, routes: routes.map((r) => ({ ...r, segments: r.path.split("/") })) };
    return this.compiled.routes;
  }

  private static matches(pattern: string[], segments: string[]): boolean {
    for (let i = 0; i < pattern.length; i++) {
      const s = pattern[i]!;
      if (s === "*") return true;
      if (i >= segments.length || (s.startsWith(":") ? segments[i] === "" : s !== segments[i])) return false;
    }
    return pattern.length === segments.length;
  }

  /** The pattern of the first route of `method` (or ALL) that `path` is, if any. */
  match(method: string, path: string): string | undefined {
    const segments = path.split("/");
    return this.table().find(
      (r) => (r.method === method || r.method === "ALL") && RouteTable.matches(r.segments, segments),
    )?.path;
  }

  /** The methods `path` has a route for (none: no such path). */
  methods(path: string): string[] {
    const segments = path.split("/");
    const found = this.table().filter((r) => RouteTable.matches(r.segments, segments));
    return [...new Set(found.map((r) => r.method))].filter((m) => m !== "ALL");
  }
}
