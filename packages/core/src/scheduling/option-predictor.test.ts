import { describe, expect, it } from "vitest";
import { HOST_PROFILES, scenarioHostFromProfile } from "../cold-start-model/index";
import { optionPredictor } from "./option-predictor";
import {
  physicsPriorSeconds,
  predictTimeToReady,
  type HistoryForOption,
} from "./predict-time-to-ready";
import type { StartOption } from "./start-option";
import { deployment, makeNode } from "./test-fixtures";

const noHistory = (): HistoryForOption => ({});
const option = (nodeId: string, o: Partial<StartOption> = {}): StartOption => ({
  nodeId,
  nodeName: nodeId,
  path: "pull",
  locality: "cold",
  gpusToReserve: 1,
  startsInFlight: 0,
  ...o,
});

describe("optionPredictor", () => {
  it("answers what the physics prior and the history predict, per node, path and locality", () => {
    const predict = optionPredictor(deployment, [], noHistory);
    const small = makeNode({ id: "a" });
    const large = makeNode({
      id: "b",
      host: scenarioHostFromProfile(HOST_PROFILES["p4d.24xlarge"]),
    });
    for (const node of [small, large])
      for (const [path, locality] of [
        ["pull", "cold"],
        ["pull", "image-cached"],
        ["lazy", "cold"],
      ] as const)
        expect(predict(node, option(node.id, { path, locality }))).toEqual(
          predictTimeToReady({
            priorSeconds: physicsPriorSeconds({ host: node.host, deployment, path, locality }),
            history: noHistory(),
          }),
        );
    // Different figures, different answers: the cache is keyed by what the physics reads.
    expect(predict(small, option("a")).meanSeconds).not.toBe(
      predict(large, option("b")).meanSeconds,
    );
  });

  it("simulates an option once for all the nodes that share its figures", () => {
    const predict = optionPredictor(deployment, [], noHistory);
    // Two nodes loaded apart (distinct host objects) with the same instance type's figures.
    const first = predict(makeNode({ id: "a" }), option("a"));
    const second = predict(makeNode({ id: "b" }), option("b"));
    expect(second).toBe(first);
  });
});
