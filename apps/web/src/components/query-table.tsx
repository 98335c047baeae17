import type { ReactNode } from "react";
import { errorMessage, StateRow } from "./query-state.tsx";

/** The slice of a React Query result a table needs. */
interface TableQuery<Row> {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: Row[] | undefined;
}

/**
 * A dashboard table fed by a query: header, then a loading, error or empty row, or the
 * rows themselves. Every table says what state it is in, the same way.
 */
export function QueryTable<Row>({
  testId,
  columns,
  query,
  noun,
  empty,
  children,
}: {
  testId: string;
  columns: readonly string[];
  query: TableQuery<Row>;
  /** Plural noun for the loading and error messages, e.g. "nodes". */
  noun: string;
  empty: ReactNode;
  children: (rows: Row[]) => ReactNode;
}) {
  return (
    <div className="table-scroll">
      <table data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {query.isPending && (
            <StateRow colSpan={columns.length} kind="loading">
              Loading {noun}…
            </StateRow>
          )}
          {query.isError && (
            <StateRow colSpan={columns.length} kind="error">
              Could not load {noun}: {errorMessage(query.error)}
            </StateRow>
          )}
          {query.data?.length === 0 && (
            <StateRow colSpan={columns.length} kind="empty">
              {empty}
            </StateRow>
          )}
          {query.data && query.data.length > 0 && children(query.data)}
        </tbody>
      </table>
    </div>
  );
}
