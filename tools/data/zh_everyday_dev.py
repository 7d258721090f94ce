#!/usr/bin/python3
"""A second set of everyday Chinese sentences, the DEVELOPMENT set of issue #33 item 6: what chooses between trained
runs of the character LM (tools/measure/eval_everyday.py --dev), never trained on and never the held-out test.

Written for this purpose by the project, on the same ten topics as the held-out test set (zh_everyday_heldout.py),
after it, and sharing no sentence and no character 8-gram with it (`main()` checks). The test set is the measure of
the target; this set is what a choice between runs looks at. Written sentences for training
(zh_everyday_written.py) are checked against both sets. The synthetic frames (zh_everyday_frames.py, written before
this set) are checked against the test only, and one of their templates shares 了，你看见了吗？ with a sentence here.

    /usr/bin/python3 tools/data/zh_everyday_dev.py      # prints the counts and checks the overlap with the test set
"""

import os
import sys

SENTENCES = {
    "family": [
        "我爸爸是一名老师，他在中学教语文。",
        "妈妈每天晚上都给我讲故事。",
        "我外婆做的饺子特别香。",
        "弟弟今年六岁，明年就要上小学了。",
        "我们家有五口人，爸爸、妈妈、哥哥、我和妹妹。",
        "叔叔从国外回来看我们了。",
        "姐姐每个周末都打电话给妈妈。",
        "爸爸妈妈结婚已经二十年了。",
        "我和表哥一起长大，关系很好。",
        "小时候奶奶常常带我去买糖。",
    ],
    "home": [
        "我们家住在七楼，没有电梯。",
        "桌子上放着一杯热水。",
        "妈妈在阳台上晒衣服。",
        "家里的洗衣机又坏了。",
        "我每天早上自己整理床铺。",
        "客厅的墙上挂着一张全家福。",
        "门口的鞋太多了，快收拾一下。",
        "我的书桌上有一盏台灯。",
        "这个房子有三个房间和两个卫生间。",
        "下雨了，快去把窗户关上。",
    ],
    "food": [
        "我不太喜欢吃辣的东西。",
        "晚饭我们吃米饭和青菜。",
        "这个西瓜很甜，你尝一尝。",
        "我肚子饿了，有没有吃的？",
        "他早上只喝了一杯咖啡。",
        "妈妈包的饺子是白菜猪肉馅的。",
        "这家店的牛肉面很有名。",
        "吃完饭要记得洗碗。",
        "我想喝一杯冰水。",
        "中秋节我们一起吃月饼。",
    ],
    "school": [
        "我最喜欢的课是体育课。",
        "老师在黑板上写了一道题。",
        "放学以后我先写作业再玩。",
        "明天有英语考试，我得好好复习。",
        "我的同桌是一个很爱笑的女孩。",
        "学校门口有一家小卖部。",
        "今天上课我回答对了老师的问题。",
        "他上课总是迟到。",
        "我们下个星期去博物馆参观。",
        "这本书是我从图书馆借的。",
    ],
    "travel": [
        "我们坐大巴去了上海。",
        "这个城市的公共汽车很方便。",
        "请问最近的地铁站在哪里？",
        "我们订了一个离海边很近的酒店。",
        "去年夏天我和朋友去爬山了。",
        "火车票已经卖完了，我们只能明天走。",
        "路上堵车，我们迟到了半个小时。",
        "他第一次坐飞机，有点紧张。",
    ],
    "weather": [
        "今天天气真好，我们出去走走吧。",
        "外面很冷，多穿一件衣服。",
        "这几天一直在下雨。",
        "太阳出来了，地上的雪慢慢化了。",
        "秋天的时候树叶都变黄了。",
        "明天可能有雷阵雨。",
    ],
    "shopping": [
        "我去商场买了一件外套。",
        "这双鞋有大一号的吗？",
        "可以用手机付钱吗？",
        "菜市场的鸡蛋比超市便宜。",
        "她买了很多东西，拿不动了。",
        "这个杯子我很喜欢，就买它吧。",
    ],
    "health": [
        "我头疼，想早点睡觉。",
        "多吃水果和蔬菜对身体好。",
        "他的腿受伤了，要在家休息一个星期。",
        "医院里人很多，我们排了很长时间的队。",
        "你脸色不太好，是不是病了？",
        "晚上不要玩手机玩得太晚。",
    ],
    "work": [
        "她在银行工作了十年。",
        "明天早上九点开会，别迟到。",
        "我找到了一份新工作。",
        "今天的工作终于做完了。",
        "经理说这个月大家都很辛苦。",
        "他每天坐地铁去上班。",
    ],
    "daily": [
        "早上好，你吃早饭了吗？",
        "我的钱包不见了，你看见了吗？",
        "请帮我开一下门。",
        "今天晚上我们去看电影吧。",
        "他每天晚上十一点睡觉。",
        "你会说中文吗？",
        "没关系，下次注意就好。",
        "我等了你很久，你怎么才来？",
        "这是我第一次来这里。",
        "星期天我一般在家休息。",
        "请你说慢一点，我听不懂。",
        "外面有人敲门，你去看看是谁。",
        "我们明天几点见面？",
        "她笑着对我说了声谢谢。",
        "周末你有什么打算？",
        "我每天晚上给花浇水。",
    ],
}


def sentences():
    """[(topic, sentence)] in a fixed order."""
    return [(topic, s) for topic, items in SENTENCES.items() for s in items]


def grams(text, n=8):
    return {text[i:i + n] for i in range(len(text) - n + 1)}


def main():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
    import attnscope_tools  # noqa: F401  (first: no __pycache__ in tools/)
    from data import zh_everyday_heldout
    items, test = sentences(), zh_everyday_heldout.sentences()
    print(f"{len(items)} sentences, {sum(len(s) for _, s in items)} characters")
    assert len({s for _, s in items}) == len(items), "a sentence is listed twice"
    shared = {s for _, s in items} & {s for _, s in test}
    assert not shared, f"in the test set too: {shared}"
    test_grams = set().union(*(grams(s) for _, s in test))
    overlap = sorted(g for _, s in items for g in grams(s) if g in test_grams)
    assert not overlap, f"8-grams shared with the test set: {overlap}"
    print("no sentence and no character 8-gram shared with zh_everyday_heldout.py")


if __name__ == "__main__":
    main()
