import type { ReactNode } from "react";

/** Loading / error / empty rows shared by the dashboard tables. */
export function StateRow({
  colSpan,
  kind,
  children,
}: {
  colSpan: number;
  kind: "loading" | "error" | "empty";
  children: ReactNode;
}) {
  return (
    <tr className={`state-row ${kind}`} data-testid={`${kind}-row`}>
      <td colSpan={colSpan} role={kind === "error" ? "alert" : undefined}>
        {children}
      </td>
    </tr>
  );
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : "Something went wrong.";
}
