import type { ReactNode } from "react";

/**
 * A chart with its accessible name and a data-table alternative: screen readers get the
 * caption and the table; everyone can open the table under the chart.
 */
export function ChartFigure({
  id,
  title,
  description,
  testId,
  table,
  children,
}: {
  id: string;
  title: string;
  description: string;
  testId?: string;
  table: { columns: readonly string[]; rows: (string | number)[][] };
  children: ReactNode;
}) {
  return (
    <figure className="chart" aria-labelledby={`${id}-title`} data-testid={testId}>
      <figcaption>
        <h3 id={`${id}-title`}>{title}</h3>
        <p className="muted small" id={`${id}-desc`}>
          {description}
        </p>
      </figcaption>
      <div
        className="chart-canvas"
        role="img"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-desc`}
      >
        {children}
      </div>
      <details className="chart-data">
        <summary>Data table: {title.toLowerCase()}</summary>
        <div className="table-scroll">
          <table>
            <caption className="sr-only">{title}</caption>
            <thead>
              <tr>
                {table.columns.map((c) => (
                  <th key={c} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row, i) => (
                <tr key={i}>
                  {row.map((cell, j) => (
                    <td key={j} className={typeof cell === "number" ? "num" : undefined}>
                      {cell}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
