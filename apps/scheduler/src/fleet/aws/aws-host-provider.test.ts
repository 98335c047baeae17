import { Readable } from "node:stream";
import type { Offering } from "@thaw/core";
import { describe, expect, it } from "vitest";
import { AwsFleetConfig } from "./aws-fleet-config.ts";
import { AwsHostProvider } from "./aws-host-provider.ts";

// Throttling and refusals that moto never produces, answered by a scripted transport under
// the real SDK (its XML parsing, its adaptive retry), as EC2 answers them.

const L40S_A: Offering = {
  instanceType: "g6e.xlarge",
  zone: "us-east-1a",
  gpuModel: "L40S",
  gpusPerHost: 1,
  priceUsdPerHour: 1.86,
};
const L40S_B: Offering = { ...L40S_A, zone: "us-east-1b" };

const XMLNS = 'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"';
const noInstances = `<DescribeInstancesResponse ${XMLNS}><requestId>r</requestId><reservationSet/></DescribeInstancesResponse>`;
const launched = (id: string) =>
  `<RunInstancesResponse ${XMLNS}><requestId>r</requestId><reservationId>r-1</reservationId><ownerId>1</ownerId><instancesSet><item><instanceId>${id}</instanceId><instanceType>g6e.xlarge</instanceType></item></instancesSet></RunInstancesResponse>`;
const ec2Error = (code: string, message: string) =>
  `<Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>x</RequestID></Response>`;

interface Sent {
  action: string;
  params: URLSearchParams;
  at: number;
}

function scripted(answers: Record<string, [number, string][]>) {
  const sent: Sent[] = [];
  const handler = {
    handle: (request: { body?: string }) => {
      const params = new URLSearchParams(request.body ?? "");
      const action = params.get("Action") ?? "?";
      sent.push({ action, params, at: performance.now() });
      const queue = answers[action];
      const [status, body] = (queue && queue.length > 1 ? queue.shift() : queue?.[0]) ?? [
        500,
        ec2Error("InternalError", "no scripted answer"),
      ];
      return Promise.resolve({
        response: {
          statusCode: status,
          reason: "",
          headers: { "content-type": "text/xml" },
          body: Readable.from([Buffer.from(body)]),
        },
      });
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  };
  return { sent, handler };
}

function providerWith(handler: ReturnType<typeof scripted>["handler"], maxAttempts = 5) {
  return new AwsHostProvider({
    config: AwsFleetConfig.parse({
      region: "us-east-1",
      clusterName: "thaw-unit",
      imageId: "ami-0123456789abcdef0",
      maxAttempts,
    }),
    userData: () => "#cloud-config\n",
    clientConfig: {
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      requestHandler: handler as never,
    },
  });
}

const request = { nodeId: "0190a0a0-0000-7000-8000-000000000001", orgId: "o", joinToken: "t" };

describe("aws host provider under throttling and refusals", () => {
  it("backs off on RequestLimitExceeded and resends the same ClientToken until EC2 accepts", async () => {
    const { sent, handler } = scripted({
      DescribeInstances: [[200, noInstances]],
      RunInstances: [
        [503, ec2Error("RequestLimitExceeded", "Request limit exceeded.")],
        [503, ec2Error("RequestLimitExceeded", "Request limit exceeded.")],
        [200, launched("i-0aaaaaaaaaaaaaaa1")],
      ],
    });
    const result = await providerWith(handler).launch({ ...request, offerings: [L40S_A] });
    expect(result).toMatchObject({ instanceId: "i-0aaaaaaaaaaaaaaa1", adopted: false });
    const runs = sent.filter((s) => s.action === "RunInstances");
    expect(runs).toHaveLength(3);
    expect(new Set(runs.map((r) => r.params.get("ClientToken"))).size).toBe(1);
    // The SDK waited between attempts (jittered exponential backoff), never resent at once.
    expect(runs[1]!.at - runs[0]!.at).toBeGreaterThan(0);
  });

  it("gives up with EC2's message once the attempts are spent", async () => {
    const { sent, handler } = scripted({
      DescribeInstances: [[200, noInstances]],
      RunInstances: [[503, ec2Error("RequestLimitExceeded", "Request limit exceeded.")]],
    });
    await expect(
      providerWith(handler, 2).launch({ ...request, offerings: [L40S_A, L40S_B] }),
    ).rejects.toMatchObject({ name: "RequestLimitExceeded", message: "Request limit exceeded." });
    // Throttling is not a capacity refusal: the next offering is not tried.
    expect(sent.filter((s) => s.action === "RunInstances")).toHaveLength(2);
  });

  it("marks an offering out of capacity and launches on the next, asking EC2 once per offering", async () => {
    const { sent, handler } = scripted({
      DescribeInstances: [[200, noInstances]],
      RunInstances: [
        [
          500,
          ec2Error(
            "InsufficientInstanceCapacity",
            "We currently do not have sufficient g6e.xlarge capacity.",
          ),
        ],
        [200, launched("i-0bbbbbbbbbbbbbbb2")],
      ],
    });
    const result = await providerWith(handler).launch({ ...request, offerings: [L40S_A, L40S_B] });
    expect(result.offering).toEqual(L40S_B);
    expect(result.unavailable.map((u) => u.offering)).toEqual([L40S_A]);
    const runs = sent.filter((s) => s.action === "RunInstances");
    expect(runs.map((r) => r.params.get("Placement.AvailabilityZone"))).toEqual([
      "us-east-1a",
      "us-east-1b",
    ]);
    // Each offering has its own token: EC2 must not answer B's launch with A's refusal.
    expect(runs[0]!.params.get("ClientToken")).not.toBe(runs[1]!.params.get("ClientToken"));
  });

  it("reports the data volume it attached, for the node to keep; none on instance-store types", async () => {
    const { sent, handler } = scripted({
      DescribeInstances: [[200, noInstances]],
      RunInstances: [[200, launched("i-0ccccccccccccccc3")]],
    });
    const provider = providerWith(handler);
    const result = await provider.launch({ ...request, offerings: [L40S_A] });
    expect(result.volume).toEqual({ throughputMiBps: 1_000, iops: 16_000 });
    const run = sent.find((s) => s.action === "RunInstances")!;
    expect(run.params.get("BlockDeviceMapping.1.Ebs.Throughput")).toBe("1000");
    const p5 = await provider.launch({
      ...request,
      offerings: [{ ...L40S_A, instanceType: "p5.48xlarge", gpuModel: "H100" }],
    });
    expect(p5.volume).toBeUndefined();
  });

  it("stops at an error another offering would repeat (a bad AMI), naming it", async () => {
    const { sent, handler } = scripted({
      DescribeInstances: [[200, noInstances]],
      RunInstances: [
        [
          400,
          ec2Error(
            "InvalidAMIID.NotFound",
            "The image id '[ami-0123456789abcdef0]' does not exist",
          ),
        ],
      ],
    });
    await expect(
      providerWith(handler).launch({ ...request, offerings: [L40S_A, L40S_B] }),
    ).rejects.toMatchObject({ name: "InvalidAMIID.NotFound" });
    expect(sent.filter((s) => s.action === "RunInstances")).toHaveLength(1);
  });
});

describe("AwsFleetConfig", () => {
  it("names the field that is wrong", () => {
    const result = AwsFleetConfig.safeParse({
      region: "mars-1",
      clusterName: "prod",
      imageId: "ami-0123456789abcdef0",
      dataVolume: { throughputMiBps: 5_000 },
    });
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((i) => i.path.join("."));
    expect(paths).toEqual(["region", "dataVolume.throughputMiBps"]);
  });

  it("asks for an AMI or a launch template", () => {
    const result = AwsFleetConfig.safeParse({ region: "us-east-1", clusterName: "prod" });
    expect(result.error?.issues[0]).toMatchObject({ path: ["imageId"] });
  });

  it("defaults the data volume to gp3 at 1,000 MiB/s and 16,000 IOPS", () => {
    const config = AwsFleetConfig.parse({
      region: "us-east-1",
      clusterName: "prod",
      imageId: "ami-0123456789abcdef0",
    });
    expect(config.dataVolume).toEqual({
      deviceName: "/dev/sdf",
      sizeGiB: 500,
      throughputMiBps: 1_000,
      iops: 16_000,
    });
  });
});
