// The `backup` and `restore` subcommands of tablemere-server.
#pragma once

namespace tablemere::server {

int BackupCommand(int argc, char** argv);
int RestoreCommand(int argc, char** argv);

}  // namespace tablemere::server
