import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeImagesCommand,
  EC2Client,
} from "@aws-sdk/client-ec2";
import type { MotoServer } from "@thaw/core/testing";

// moto's EC2 emulator for the aws provider's tests: the process is core's (startMotoServer in
// @thaw/core/testing); here, the network a GPU host fleet needs inside it.

export { freePort, startMotoServer, type MotoServer } from "@thaw/core/testing";

/** An admin client for moto, and the network a GPU host fleet needs: a VPC, one subnet per zone, a group. */
export async function createMotoNetwork(
  moto: MotoServer,
  zones: readonly string[],
): Promise<{
  admin: EC2Client;
  imageId: string;
  subnetIdByZone: Record<string, string>;
  securityGroupId: string;
}> {
  const admin = new EC2Client({
    region: "us-east-1",
    endpoint: moto.endpoint,
    credentials: moto.credentials,
  });
  const imageId = (await admin.send(new DescribeImagesCommand({}))).Images![0]!.ImageId!;
  const vpc = (await admin.send(new CreateVpcCommand({ CidrBlock: "10.40.0.0/16" }))).Vpc!;
  const subnetIdByZone: Record<string, string> = {};
  for (const [i, zone] of zones.entries()) {
    const subnet = await admin.send(
      new CreateSubnetCommand({
        VpcId: vpc.VpcId!,
        CidrBlock: `10.40.${i + 1}.0/24`,
        AvailabilityZone: zone,
      }),
    );
    subnetIdByZone[zone] = subnet.Subnet!.SubnetId!;
  }
  const sg = await admin.send(
    new CreateSecurityGroupCommand({
      GroupName: "thaw-gpu-hosts",
      Description: "agents",
      VpcId: vpc.VpcId!,
    }),
  );
  return { admin, imageId, subnetIdByZone, securityGroupId: sg.GroupId! };
}
