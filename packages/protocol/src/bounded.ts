import { z } from "zod";

/**
 * A measured figure: finite, not negative, at most `max`. Numbers from an agent are bounded
 * so that a malformed one cannot store NaN, Infinity or absurd figures.
 */
export const boundedFigure = (max: number) => z.number().finite().min(0).max(max);
