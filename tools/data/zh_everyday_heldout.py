#!/usr/bin/python3
"""Held-out everyday Chinese sentences for the character LM (issue #33, item 6). NEVER USED IN TRAINING.

Written for this purpose by the project, not taken from any package or corpus: short sentences of the kind a learner
types into the demo (family, home, food, school, travel, weather, shopping, health, work, daily life). They are the
test of whether the model has learnt the characters of everyday text in everyday sentences.

How they stay out of training: tools/data/zh_everyday_data.py drops every training paragraph that contains one of them
(or its longest clause) and records how many of their character 8-grams occur in its text; zh_everyday_frames.py drops
every generated sentence sharing an 8-gram with one; zh_everyday_written.py refuses a written line sharing a 6-gram or
a clause with one; tools/training/train_lm.py only scores them (`everyday` in the record). Do not add them to any
training source. tools/measure/eval_everyday.py scores a model file on them with the NumPy reference (nats/char and
top-1 next-character accuracy).

    /usr/bin/python3 tools/data/zh_everyday_heldout.py      # prints the counts and any character outside the LM's vocabulary
"""

import os
import sys

SENTENCES = {
    "family": [
        "我妈妈每天早上六点起床给我们做早饭。",
        "爸爸下班回家的时候总是很累。",
        "奶奶住在乡下，我们每年春节都去看她。",
        "哥哥比我大三岁，他现在上大学了。",
        "我的妹妹很喜欢画画，她画的小狗特别可爱。",
        "周末我们全家一起去公园散步。",
        "爷爷年纪大了，耳朵有点听不清楚。",
        "姐姐结婚以后搬到了另一个城市。",
    ],
    "home": [
        "我家的客厅不大，但是很干净。",
        "厨房的灯坏了，爸爸明天去买一个新的。",
        "请把你的衣服放进衣柜里。",
        "我的房间在二楼，窗户对着一棵大树。",
        "洗完澡以后记得把浴室的地擦干。",
        "我们家养了一只猫，它喜欢睡在沙发上。",
        "冰箱里还有昨天剩下的米饭。",
        "晚上睡觉前别忘了关门。",
    ],
    "food": [
        "今天中午我想吃面条。",
        "这家饭馆的包子又大又好吃。",
        "你要喝茶还是喝咖啡？",
        "妈妈做的红烧肉是我最喜欢的菜。",
        "早饭我一般吃一个鸡蛋，喝一杯牛奶。",
        "水果要洗干净再吃。",
        "这个汤太咸了，再加点水吧。",
        "我们晚上去吃火锅怎么样？",
    ],
    "school": [
        "老师让我们明天把作业交上来。",
        "我们班一共有四十个学生。",
        "下课以后我和同学一起去操场踢足球。",
        "这次考试我数学考得不太好。",
        "图书馆里很安静，大家都在看书。",
        "他每天骑自行车去学校。",
        "上课的时候不要和旁边的同学说话。",
        "明天学校放假，我们不用上课。",
    ],
    "travel": [
        "我们坐火车去北京，要坐五个小时。",
        "请问去机场怎么走？",
        "出租车司机把我们送到了宾馆门口。",
        "这次旅行我们拍了很多照片。",
        "地铁站离我家只有十分钟的路。",
        "飞机晚点了，我们在机场等了两个小时。",
        "暑假我想去海边玩几天。",
        "出门前别忘了带护照和钱包。",
    ],
    "weather": [
        "今天外面下大雨，你带伞了吗？",
        "天气预报说明天会变冷。",
        "夏天这里很热，冬天很少下雪。",
        "风太大了，我们还是待在家里吧。",
        "春天来了，公园里的花都开了。",
        "昨天晚上刮了一夜的风。",
    ],
    "shopping": [
        "这件衣服多少钱？",
        "超市里的苹果今天打折。",
        "我想买一双新鞋，旧的已经穿破了。",
        "妈妈让我去楼下的商店买一瓶酱油。",
        "这个太贵了，能便宜一点吗？",
        "我在网上买的书今天到了。",
    ],
    "health": [
        "我有点发烧，今天不想去上班。",
        "医生说我要多喝水，多休息。",
        "你的感冒好点了吗？",
        "每天早上跑步对身体很好。",
        "他牙疼得厉害，晚上都睡不着觉。",
        "吃完药以后要好好睡一觉。",
    ],
    "work": [
        "我每天早上八点到公司上班。",
        "今天的会议改到下午三点了。",
        "他在一家医院当护士。",
        "这个星期工作太忙了，我周末也要加班。",
        "老板让我给客人打个电话。",
        "下班以后我们一起去吃饭吧。",
    ],
    "daily": [
        "现在几点了？我的手机没电了。",
        "你好，很高兴认识你。",
        "对不起，我来晚了。",
        "谢谢你帮我搬家。",
        "明天是我朋友的生日，我要送她一个礼物。",
        "我们好久没见了，你最近怎么样？",
        "他说话的声音太小，我听不见。",
        "晚上我一般看一会儿电视再睡觉。",
        "小狗在门口等主人回来。",
        "周六上午我要带孩子去学游泳。",
        "你的电话号码是多少？",
        "我把钥匙忘在办公室了。",
        "邻居家的孩子每天晚上练钢琴。",
        "今天是星期五，大家都很高兴。",
        "我们下个月要搬到新家去了。",
        "吃饭的时候不要看手机。",
    ],
}


def sentences():
    """[(topic, sentence)] in a fixed order."""
    return [(topic, s) for topic, items in SENTENCES.items() for s in items]


def main():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
    import attnscope_tools  # noqa: F401  (first: no __pycache__ in tools/)
    import json
    from attnscope_tools import safetensors_file
    from attnscope_tools.paths import ROOT
    items = sentences()
    print(f"{len(items)} sentences, {sum(len(s) for _, s in items)} characters, topics: "
          + ", ".join(f"{t} {len(v)}" for t, v in SENTENCES.items()))
    assert len({s for _, s in items}) == len(items), "a sentence is listed twice"
    model = os.path.join(ROOT, "models", "char-lm.safetensors")
    if os.path.exists(model):
        meta, _ = safetensors_file.load_file(model)
        tokens = set(json.loads(meta["vocab"])["tokens"])
        outside = sorted({c for _, s in items for c in s if c not in tokens})
        print("characters outside models/char-lm.safetensors's vocabulary:", "".join(outside) or "none")


if __name__ == "__main__":
    main()
