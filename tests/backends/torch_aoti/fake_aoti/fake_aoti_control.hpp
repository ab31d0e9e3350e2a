// How tests look into the fake AOTIModelPackageLoader (fake_model_package_loader.cpp).
#pragma once

#include <string>

namespace fake_aoti {

struct Calls {
    int loaders_alive = 0;  // constructed and not yet destroyed
    int runs = 0;
    bool last_run_single_threaded = false;
    int last_device_index = -2;
    std::string last_model_name;
    std::string last_path;
};

Calls calls();
void reset();

}  // namespace fake_aoti
